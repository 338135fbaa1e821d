package manifest

import (
	"os"
	"sort"
)

// baseEnv lists the variables every bundle gets from the node's environment: what programs
// need to find things and print text, and nothing that tends to hold secrets.
func baseEnv() []string {
	return []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "TERM"}
}

// Environ returns the bundle's whole environment: the base variables and those listed in
// inherit_env, taken from the node's environment (lookup, os.LookupEnv when nil), then the
// manifest's env on top. Sorted, so that a restart sees the same bytes.
func (m *Manifest) Environ(lookup func(string) (string, bool)) []string {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	vars := map[string]string{}
	for _, k := range append(baseEnv(), m.InheritEnv...) {
		if v, ok := lookup(k); ok {
			vars[k] = v
		}
	}
	if _, ok := vars["PATH"]; !ok {
		vars["PATH"] = "/usr/local/bin:/usr/bin:/bin"
	}
	for k, v := range m.Env {
		vars[k] = v
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}
