package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"
)

// runSection measures toolnode.run over the MEOS bundle. For five multi-step tasks over a
// fleet of 20 trajectories, it counts what a model sees doing each task with one tool call
// per step (a round trip each, and every result in its context) against one program; both
// ways are checked to give the same answer. Then it times a run's inner calls against the
// same calls made one by one by a client.
func runSection(cfg config, w *strings.Builder) error {
	_, dir, err := meosFolder(cfg)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	c, err := startStdio("toolnode.run", cfg.node, "serve", "--bundles", dir, "--log-level", "warn")
	if err != nil {
		return err
	}
	defer c.close()

	fleet := makeFleet(20)
	fmt.Fprintf(w, "## Code over tools (`toolnode.run`) over MEOS\n\n")
	fmt.Fprintf(w, "Five tasks over a fleet of %d trajectories, done with one tool call per step (each a model turn, its result\n"+
		"in the model's context) and with one `toolnode.run` program; both give the same answer. Bytes are those of the\n"+
		"tools/call results the model receives.\n\n", len(fleet))
	fmt.Fprintf(w, "| task | round trips, one call per step | with toolnode.run | bytes returned, one call per step | with toolnode.run | fewer bytes |\n|---|---|---|---|---|---|\n")
	for _, task := range runTasks(fleet) {
		direct, err := task.direct(c)
		if err != nil {
			return fmt.Errorf("%s, one call per step: %w", task.name, err)
		}
		res, err := c.roundTrip(`"tools/call","params":{"name":"toolnode.run","arguments":{"code":` + quote(task.program) + `}}`)
		if err != nil {
			return fmt.Errorf("%s, toolnode.run: %w", task.name, err)
		}
		var out struct {
			Result struct {
				StructuredContent struct {
					Value json.RawMessage `json:"value"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(res, &out); err != nil {
			return err
		}
		got, want := compact(out.Result.StructuredContent.Value), compact(direct.answer)
		if got != want {
			return fmt.Errorf("%s: the program answered %s, the calls %s", task.name, got, want)
		}
		runBytes := resultBytes(res)
		fmt.Fprintf(w, "| %s | %d | 1 | %d | %d | %.1f× |\n", task.name, direct.calls, direct.bytes, runBytes, float64(direct.bytes)/float64(runBytes))
	}

	// The cost of an inner call: 20 meos.length calls in one run against the same 20
	// made by the client one at a time, taking turns.
	var directCalls, inner []time.Duration
	var program strings.Builder
	program.WriteString("T = " + pyList(fleet) + "\n[meos.length(point=t)[\"length\"] for t in T]")
	for round := 0; round < cfg.rounds*10; round++ {
		start := time.Now()
		for _, t := range fleet {
			if _, err := c.roundTrip(`"tools/call","params":{"name":"meos.length","arguments":{"point":` + quote(t) + `}}`); err != nil {
				return err
			}
		}
		directCalls = append(directCalls, time.Since(start)/time.Duration(len(fleet)))
		start = time.Now()
		if _, err := c.roundTrip(`"tools/call","params":{"name":"toolnode.run","arguments":{"code":` + quote(program.String()) + `}}`); err != nil {
			return err
		}
		inner = append(inner, time.Since(start)/time.Duration(len(fleet)))
	}
	d, r := median(directCalls), median(inner)
	fmt.Fprintf(w, "\nOne `meos.length` call, median of %d rounds of %d: made by the client through the node's stdio front, %s;\n"+
		"made by a program inside one `toolnode.run` (its share of the run: parsing and checking the program, the call,\n"+
		"the result as a Starlark value), %s: %.2f× the direct call, %+.0f µs a call.\n\n",
		len(inner), len(fleet), us(d), us(r), float64(r)/float64(d), float64(r-d)/float64(time.Microsecond))
	return nil
}

// runTask is one task, done both ways.
type runTask struct {
	name    string
	program string
	direct  func(c *stdioClient) (directOutcome, error)
}

// directOutcome is a task done one call per step: its answer, calls and bytes returned.
type directOutcome struct {
	answer json.RawMessage
	calls  int
	bytes  int
}

// stepCaller makes a task's calls one by one, counting them and their results' bytes.
type stepCaller struct {
	c   *stdioClient
	out directOutcome
}

// call calls tool with args and returns its structured content.
func (k *stepCaller) call(tool string, args map[string]string) (map[string]any, error) {
	a, _ := json.Marshal(args)
	res, err := k.c.roundTrip(`"tools/call","params":{"name":"` + tool + `","arguments":` + string(a) + `}`)
	if err != nil {
		return nil, err
	}
	k.out.calls++
	k.out.bytes += resultBytes(res)
	var r struct {
		Result struct {
			StructuredContent map[string]any `json:"structuredContent"`
			Content           []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, err
	}
	if r.Result.StructuredContent == nil && len(r.Result.Content) > 0 {
		return map[string]any{"text": r.Result.Content[0].Text}, nil
	}
	return r.Result.StructuredContent, nil
}

func (k *stepCaller) answer(v any) (directOutcome, error) {
	k.out.answer, _ = json.Marshal(v)
	return k.out, nil
}

// zone is the area tasks ask about.
const zone = "POLYGON((400 400, 700 400, 700 700, 400 700, 400 400))"

// runTasks are the tasks over fleet.
func runTasks(fleet []string) []runTask {
	T := "T = " + pyList(fleet) + "\n"
	lengths := func(k *stepCaller) ([]float64, error) {
		var out []float64
		for _, t := range fleet {
			r, err := k.call("meos.length", map[string]string{"point": t})
			if err != nil {
				return nil, err
			}
			out = append(out, r["length"].(float64))
		}
		return out, nil
	}
	argmax := func(xs []float64) int {
		best := 0
		for i, x := range xs {
			if x > xs[best] {
				best = i
			}
		}
		return best
	}
	return []runTask{
		{name: "which trajectory is longest", program: T + `L = [meos.length(point=t)["length"] for t in T]
L.index(max(L))`, direct: func(c *stdioClient) (directOutcome, error) {
			k := &stepCaller{c: c}
			l, err := lengths(k)
			if err != nil {
				return directOutcome{}, err
			}
			return k.answer(argmax(l))
		}},
		{name: "where the longest is at noon", program: T + `L = [meos.length(point=t)["length"] for t in T]
meos.value_at(point=T[L.index(max(L))], timestamp="2025-01-01T12:00:00Z")`, direct: func(c *stdioClient) (directOutcome, error) {
			k := &stepCaller{c: c}
			l, err := lengths(k)
			if err != nil {
				return directOutcome{}, err
			}
			r, err := k.call("meos.value_at", map[string]string{"point": fleet[argmax(l)], "timestamp": "2025-01-01T12:00:00Z"})
			if err != nil {
				return directOutcome{}, err
			}
			return k.answer(r["text"])
		}},
		{name: "which is fastest on average", program: T + `S = [meos.speed(point=t)["time_weighted_average"] for t in T]
S.index(max(S))`, direct: func(c *stdioClient) (directOutcome, error) {
			k := &stepCaller{c: c}
			var s []float64
			for _, t := range fleet {
				r, err := k.call("meos.speed", map[string]string{"point": t})
				if err != nil {
					return directOutcome{}, err
				}
				s = append(s, r["time_weighted_average"].(float64))
			}
			return k.answer(argmax(s))
		}},
		{name: "which ever enter the zone", program: T + `[i for i, t in enumerate(T) if meos.eintersects_tgeo_geo(temp=t, gs="` + zone + `")["result"] == 1]`,
			direct: func(c *stdioClient) (directOutcome, error) {
				k := &stepCaller{c: c}
				in := []int{}
				for i, t := range fleet {
					r, err := k.call("meos.eintersects_tgeo_geo", map[string]string{"temp": t, "gs": zone})
					if err != nil {
						return directOutcome{}, err
					}
					if r["result"].(float64) == 1 {
						in = append(in, i)
					}
				}
				return k.answer(in)
			}},
		{name: "which two of the first 6 come closest", program: T + `D = [(meos.nad_tgeo_tgeo(temp1=T[i], temp2=T[j])["result"], [i, j]) for i in range(6) for j in range(i + 1, 6)]
min(D)[1]`, direct: func(c *stdioClient) (directOutcome, error) {
			k := &stepCaller{c: c}
			best, pair := -1.0, []int{}
			for i := 0; i < 6; i++ {
				for j := i + 1; j < 6; j++ {
					r, err := k.call("meos.nad_tgeo_tgeo", map[string]string{"temp1": fleet[i], "temp2": fleet[j]})
					if err != nil {
						return directOutcome{}, err
					}
					if d := r["result"].(float64); best < 0 || d < best {
						best, pair = d, []int{i, j}
					}
				}
			}
			return k.answer(pair)
		}},
	}
}

// makeFleet makes n trajectories over a day, each through five points of a 1000 by 1000
// square, the same for every run.
func makeFleet(n int) []string {
	rng := rand.New(rand.NewPCG(34, 1))
	hours := []string{"08", "10", "12", "14", "16"}
	fleet := make([]string, n)
	for i := range fleet {
		var pts []string
		for _, h := range hours {
			pts = append(pts, fmt.Sprintf("POINT(%d %d)@2025-01-01T%s:00:00Z", rng.IntN(1000), rng.IntN(1000), h))
		}
		fleet[i] = "[" + strings.Join(pts, ", ") + "]"
	}
	return fleet
}

// pyList writes strings as a Starlark list.
func pyList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = quote(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// resultBytes is the size of a response's result, what a client hands its model.
func resultBytes(res []byte) int {
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(res, &r)
	return len(r.Result)
}

func compact(b json.RawMessage) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
