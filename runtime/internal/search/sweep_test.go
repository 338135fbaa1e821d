package search

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	for _, kv := range strings.Split(os.Getenv("SWEEP"), ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		f, _ := strconv.ParseFloat(v, 64)
		switch k {
		case "cov":
			coveragePower = f
		case "extra":
			extraPartWeight = f
		case "bigram":
			bigramWeight = f
		case "curated":
			curatedBoost = f
		case "variant":
			variantPenalty = f
		case "w0", "w1", "w2", "w3", "w4", "w5", "w6":
			fieldWeight[k[1]-'0'] = f
		}
	}
	os.Exit(m.Run())
}
