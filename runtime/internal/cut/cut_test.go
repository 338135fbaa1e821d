package cut

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTextThatFitsIsNotCut(t *testing.T) {
	c, cut := Text("short", 10)
	if cut || c.Text != "short" || c.Offset != 5 {
		t.Fatalf("Text(short, 10) = %+v, %v; want it whole and not cut", c, cut)
	}
}

func TestJSONArrayIsCutAtWholeItemsAndStaysValid(t *testing.T) {
	var items []string
	for i := range 1000 {
		items = append(items, fmt.Sprintf(`{"i":%d,"name":"item %d"}`, i, i))
	}
	whole := "[" + strings.Join(items, ",") + "]"
	for _, budget := range []int{100, 1000, 4096, len(whole) - 1} {
		c, cut := Text(whole, budget)
		if !cut || c.How != JSON {
			t.Fatalf("budget %d: cut %v how %q; want a JSON cut", budget, cut, c.How)
		}
		if len(c.Text) > budget {
			t.Errorf("budget %d: kept %d bytes", budget, len(c.Text))
		}
		var got []map[string]any
		if err := json.Unmarshal([]byte(c.Text), &got); err != nil {
			t.Fatalf("budget %d: the kept text is not JSON: %v\n%s", budget, err, c.Text)
		}
		if len(got) != c.ItemsKept || c.ItemsKept+c.ItemsLeft != 1000 {
			t.Errorf("budget %d: %d items decoded, ItemsKept %d ItemsLeft %d; want them to add up to 1000", budget, len(got), c.ItemsKept, c.ItemsLeft)
		}
		if !strings.HasPrefix(whole, c.Text[:c.Offset]) || c.Text[c.Offset:] != "]" {
			t.Errorf("budget %d: the kept text is not the whole's prefix closed: offset %d, tail %q", budget, c.Offset, c.Text[c.Offset:])
		}
	}
}

func TestJSONObjectWithALongArrayIsCutInsideTheArray(t *testing.T) {
	var nums []string
	for i := range 5000 {
		nums = append(nums, fmt.Sprint(i*7))
	}
	whole := `{"kind": "ids", "result": [` + strings.Join(nums, ", ") + `], "done": true}`
	c, cut := Text(whole, 2000)
	if !cut || c.How != JSON {
		t.Fatalf("cut %v how %q; want a JSON cut", cut, c.How)
	}
	var got struct {
		Kind   string `json:"kind"`
		Result []int  `json:"result"`
	}
	if err := json.Unmarshal([]byte(c.Text), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, c.Text)
	}
	if got.Kind != "ids" || len(got.Result) != c.ItemsKept || len(got.Result)+c.ItemsLeft != 5000 {
		t.Errorf("kept %q with %d items (ItemsKept %d, ItemsLeft %d)", got.Kind, len(got.Result), c.ItemsKept, c.ItemsLeft)
	}
	if c.Text[c.Offset:] != "]}" {
		t.Errorf("closers %q, want ]}", c.Text[c.Offset:])
	}
}

func TestOneHugeJSONStringIsCutAsText(t *testing.T) {
	value := strings.Repeat("POINT(1 2)@2025-01-01 00:00:00+00, ", 2000)
	whole := `{"result": "[` + value + `"}`
	c, cut := Text(whole, 4096)
	if !cut || c.How != Items {
		t.Fatalf("cut %v how %q; want a cut at a list item (keeping {} tells nothing)", cut, c.How)
	}
	if !strings.HasSuffix(c.Text, "+00, ") || len(c.Text) > 4096 || len(c.Text) < 2048 {
		t.Errorf("kept %d bytes ending %q", len(c.Text), c.Text[len(c.Text)-10:])
	}
}

func TestTextIsCutAtWholeLines(t *testing.T) {
	whole := strings.Repeat("a line of text\n", 1000)
	c, cut := Text(whole, 1000)
	if !cut || c.How != Lines || !strings.HasSuffix(c.Text, "\n") || len(c.Text) > 1000 || c.Offset != len(c.Text) {
		t.Fatalf("got %+v", c)
	}
	if whole[c.Offset:] != strings.Repeat("a line of text\n", 1000-len(c.Text)/15) {
		t.Errorf("the rest does not begin at a line: offset %d", c.Offset)
	}
}

func TestTextWithoutBoundariesSplitsNoCharacter(t *testing.T) {
	whole := strings.Repeat("é", 1000) // two bytes each
	c, cut := Text(whole, 101)
	if !cut || c.How != Runes || len(c.Text) != 100 || !utf8.ValidString(c.Text) {
		t.Fatalf("got %d bytes how %q valid %v", len(c.Text), c.How, utf8.ValidString(c.Text))
	}
}

func TestRangesSnappedToCharactersTileTheText(t *testing.T) {
	whole := strings.Repeat("aé€😀", 300)
	var b strings.Builder
	for off := 0; off < len(whole); off += 7 {
		b.WriteString(whole[RuneStart(whole, off):RuneStart(whole, off+7)])
	}
	if b.String() != whole {
		t.Fatal("ranges of 7 bytes snapped to characters do not add up to the whole")
	}
}

func FuzzTextKeepsJSONValidAndWithinBudget(f *testing.F) {
	f.Add(`[1,2,3,{"a":[4,5,"x"]},[],{}]`, 10)
	f.Add(`{"a":"b","c":[true,false,null,-1.5e3]}`, 12)
	f.Add("line one\nline two, item\tword é", 9)
	f.Fuzz(func(t *testing.T, s string, budget int) {
		if budget < 0 || budget > 1<<20 {
			return
		}
		c, cut := Text(s, budget)
		if !cut {
			if c.Text != s {
				t.Fatal("not cut, yet changed")
			}
			return
		}
		if len(c.Text) > budget {
			t.Fatalf("kept %d bytes of a budget of %d", len(c.Text), budget)
		}
		if !strings.HasPrefix(s, c.Text[:c.Offset]) {
			t.Fatal("the kept text is not a prefix of the whole")
		}
		if c.How == JSON && !json.Valid([]byte(c.Text)) {
			t.Fatalf("a JSON cut is not JSON: %q", c.Text)
		}
		if utf8.ValidString(s) && !utf8.ValidString(c.Text) {
			t.Fatal("a character was split")
		}
	})
}
