package cli

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag of a size in bytes: a number, or one with a unit (KiB, MiB, GiB, or
// KB, MB, GB for powers of ten), e.g. 16MiB.
type byteSize int64

// String writes the size in the largest binary unit that divides it, as --help shows
// defaults: 16MiB rather than 16777216.
func (b *byteSize) String() string {
	n := int64(*b)
	for _, u := range []struct {
		suffix string
		factor int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.factor == 0 {
			return strconv.FormatInt(n/u.factor, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

func (b *byteSize) Set(s string) error {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		factor int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1},
	}
	factor := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(s, u.suffix); ok {
			s, factor = strings.TrimSpace(rest), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/factor {
		return fmt.Errorf("want a positive size such as 1048576 or 16MiB")
	}
	*b = byteSize(n * factor)
	return nil
}

// offSize is a byteSize that may also be 0, which turns off what it bounds.
type offSize struct{ byteSize }

func (b *offSize) Set(s string) error {
	if strings.TrimSpace(s) == "0" {
		b.byteSize = 0
		return nil
	}
	return b.byteSize.Set(s)
}
