package bundle_test

import (
	"testing"
	"testing/fstest"

	"github.com/toolnode/toolnode/sdk-go/bundle"
)

func TestAddSkillServesItsEntryAndRefusesWhatTheFormatDoesNot(t *testing.T) {
	s := bundle.NewServer(bundle.Options{Logger: discard()})
	skillMD := "---\nname: trip-report\ndescription: >\n  Summarise a trip\n  from its positions.\nlicense: 'MIT'\nmetadata:\n  version: \"2\"\n  level: 3\n---\n# Trip report\n"
	if err := s.AddSkill("geo/trip-report", fstest.MapFS{"SKILL.md": {Data: []byte(skillMD)}, "a.txt": {Data: []byte("a")}, ".git/x": {Data: []byte("no")}}); err != nil {
		t.Fatal(err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"no SKILL.md":       {"a.txt": {Data: []byte("a")}},
		"another name":      {"SKILL.md": {Data: []byte("---\nname: other\ndescription: d\n---\n")}},
		"no description":    {"SKILL.md": {Data: []byte("---\nname: trip-report\n---\n")}},
		"no frontmatter":    {"SKILL.md": {Data: []byte("# hello\n")}},
		"YAML beyond reach": {"SKILL.md": {Data: []byte("---\nname: trip-report\ndescription: d\ntags:\n  - a\n---\n")}},
	} {
		if err := bundle.NewServer(bundle.Options{Logger: discard()}).AddSkill("trip-report", fsys); err == nil {
			t.Errorf("%s: added", name)
		}
	}
	if err := s.AddSkill("Bad_Name", fstest.MapFS{}); err == nil {
		t.Error("a path not ending in a skill name was taken")
	}

	c := serve(t, t.Context(), s)
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	init := c.recv()
	diff(t, map[string]any{"io.modelcontextprotocol/skills": map[string]any{}}, init["result"].(map[string]any)["capabilities"].(map[string]any)["extensions"])
	c.send(`{"jsonrpc":"2.0","id":1,"method":"skills/get","params":{"uri":"skill://geo/trip-report/SKILL.md"}}`)
	got := c.recv()["result"].(map[string]any)["skill"].(map[string]any)
	diff(t, map[string]any{"name": "trip-report", "description": "Summarise a trip from its positions.\n", "license": "MIT",
		"metadata": map[string]any{"version": "2", "level": float64(3)}}, got["frontmatter"])
	if files := got["resources"].([]any); len(files) != 2 {
		t.Errorf("resources %v, want SKILL.md and a.txt", files)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{}}`)
	if list := c.recv()["result"].(map[string]any)["skills"].([]any); len(list) != 1 {
		t.Errorf("skills/list %v", list)
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"skills/get","params":{"uri":"skill://geo/none/SKILL.md"}}`)
	if e := c.recv()["error"].(map[string]any); e["code"] != float64(-32602) {
		t.Errorf("an unknown skill: %v", e)
	}
	c.send(`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"skill://geo/trip-report/a.txt"}}`)
	if contents := c.recv()["result"].(map[string]any)["contents"].([]any); contents[0].(map[string]any)["text"] != "a" {
		t.Errorf("read a.txt: %v", contents)
	}
}
