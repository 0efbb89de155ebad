/*
Copyright 2026 The cluster-api-provider-openshift-assisted Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package testreport reads what the test command's runs leave behind (`go test -json` streams,
// Ginkgo JSON reports and the timings of the other steps) and prints the per-suite time table
// that ends every run of `make test`, so that the growth of a suite shows in every CI log.
package testreport

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Suite is one row of the table: a test package, a Ginkgo suite or another step of the run.
type Suite struct {
	// Name is the package's import path (shortened by Table), the Ginkgo suite's description or
	// the step's name.
	Name string
	// Wall is how long it ran.
	Wall time.Duration
	// Passed, Failed and Skipped count its tests: top-level Go tests, except in a package that
	// runs a Ginkgo suite, where the suite's specs are counted instead.
	Passed, Failed, Skipped int
	// Specs is true when the counts are Ginkgo specs.
	Specs bool
	// Step is true for a step that runs no tests (lint, a build).
	Step bool
	// Result is "ok", "FAIL" or, for a package whose run was cut short, "incomplete".
	Result string
	// Failures are its failed tests or specs, with what they reported: Table repeats them
	// under the table, so that the end of a CI log, often all a reader gets, says what
	// failed and why, not only where.
	Failures []Failure
}

// Failure is one failed test or spec.
type Failure struct {
	// Name is the top-level test's name, or the spec's containers and text.
	Name string
	// Location is where it failed (file:line), when the report says.
	Location string
	// Message is what it reported: the failure message of a spec, the last failureLines
	// lines a test logged.
	Message string
}

// event is one line of `go test -json` (cmd/test2json; build output has ImportPath instead of
// Package).
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
	Elapsed    float64
}

// Echo copies a `go test -json` stream from r to raw as it is, and writes to out what `go test`
// without -json would: a package's "ok" line when it passes, all its output when it fails (or
// never finishes), and build errors as they come. A package's output is held until it finishes,
// so that the output of packages run side by side does not interleave.
func Echo(r io.Reader, raw, out io.Writer) error {
	held := map[string]*strings.Builder{}
	var order []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if _, err := raw.Write(append(line, '\n')); err != nil {
			return err
		}
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			if _, err := fmt.Fprintf(out, "%s\n", line); err != nil {
				return err
			}
			continue
		}
		if e.Action == "build-output" {
			if _, err := io.WriteString(out, e.Output); err != nil {
				return err
			}
			continue
		}
		if e.Package == "" {
			continue
		}
		b, ok := held[e.Package]
		if !ok {
			b = &strings.Builder{}
			held[e.Package] = b
			order = append(order, e.Package)
		}
		if e.Action == "output" {
			b.WriteString(e.Output)
			continue
		}
		if e.Test != "" {
			continue
		}
		switch e.Action {
		case "pass", "skip":
			// go test prints the package's last line: "ok  <pkg> 1.2s" or "?  <pkg> [no test files]".
			if last := lastLine(b.String()); last != "" {
				if _, err := fmt.Fprintln(out, last); err != nil {
					return err
				}
			}
			delete(held, e.Package)
		case "fail":
			if _, err := io.WriteString(out, b.String()); err != nil {
				return err
			}
			delete(held, e.Package)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading go test -json: %w", err)
	}
	for _, p := range order {
		if b, ok := held[p]; ok {
			if _, err := fmt.Fprintf(out, "%s(%s did not finish)\n", b.String(), p); err != nil {
				return err
			}
		}
	}
	return nil
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// ranSpecs matches Ginkgo's summary line, "Ran 12 of 14 Specs in 61.210 seconds".
var ranSpecs = regexp.MustCompile(`Ran (\d+) of (\d+) Specs in`)

// ansi matches a terminal colour code, which Ginkgo writes around its counts.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// ginkgoCounts matches the line after it, "SUCCESS! -- 12 Passed | 0 Failed | 0 Pending | 2 Skipped"
// (or "FAIL! -- ...").
var ginkgoCounts = regexp.MustCompile(`(\d+) Passed \| (\d+) Failed \| (\d+) Pending \| (\d+) Skipped`)

// ReadGoTest reads a `go test -json` stream and returns a row per package, in the order in which
// they finished (a package that never finished last, as incomplete).
func ReadGoTest(r io.Reader) ([]Suite, error) {
	type pkg struct {
		suite    Suite
		done     bool
		order    int
		statuses map[string]string   // top-level test -> pass, fail or skip
		output   map[string][]string // top-level test -> its last output lines
		ginkgo   bool
		skipped  bool // go test skipped the package: it has no test files
	}
	pkgs := map[string]*pkg{}
	var finished []*pkg
	get := func(name string) *pkg {
		p, ok := pkgs[name]
		if !ok {
			p = &pkg{suite: Suite{Name: name}, statuses: map[string]string{}, output: map[string][]string{}}
			pkgs[name] = p
		}
		return p
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] != '{' {
			continue // a build error or another line that is not an event
		}
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Package == "" {
			continue
		}
		p := get(e.Package)
		switch {
		case e.Action == "output":
			out := ansi.ReplaceAllString(e.Output, "")
			if m := ginkgoCounts.FindStringSubmatch(out); m != nil {
				p.ginkgo = true
				p.suite.Passed += atoi(m[1])
				p.suite.Failed += atoi(m[2])
				p.suite.Skipped += atoi(m[3]) + atoi(m[4])
			} else if ranSpecs.MatchString(out) {
				p.ginkgo = true
			}
			if top, _, _ := strings.Cut(e.Test, "/"); top != "" && !goTestFrame.MatchString(out) {
				p.output[top] = lastN(append(p.output[top], strings.TrimRight(out, "\n")), failureLines)
			}
		case e.Test != "" && !strings.Contains(e.Test, "/"):
			switch e.Action {
			case "pass", "fail", "skip":
				p.statuses[e.Test] = e.Action
			}
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			p.suite.Wall = time.Duration(e.Elapsed * float64(time.Second))
			p.suite.Result = map[string]string{"pass": "ok", "fail": "FAIL", "skip": "ok"}[e.Action]
			p.skipped = e.Action == "skip"
			if !p.done {
				p.done = true
				p.order = len(finished)
				finished = append(finished, p)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading go test -json: %w", err)
	}
	var unfinished []*pkg
	for _, p := range pkgs {
		if !p.done {
			p.suite.Result = "incomplete"
			unfinished = append(unfinished, p)
		}
	}
	sort.Slice(unfinished, func(i, j int) bool { return unfinished[i].suite.Name < unfinished[j].suite.Name })
	var out []Suite
	for _, p := range append(finished, unfinished...) {
		for _, t := range slices.Sorted(maps.Keys(p.statuses)) {
			if p.statuses[t] == "fail" {
				p.suite.Failures = append(p.suite.Failures, Failure{Name: t, Message: strings.Join(p.output[t], "\n")})
			}
		}
		if p.ginkgo {
			p.suite.Specs = true
		} else {
			for _, s := range p.statuses {
				switch s {
				case "pass":
					p.suite.Passed++
				case "fail":
					p.suite.Failed++
				case "skip":
					p.suite.Skipped++
				}
			}
		}
		if p.skipped {
			continue // a package without test files
		}
		out = append(out, p.suite)
	}
	return out, nil
}

// ginkgoSuite is the part of a Ginkgo JSON report (types.Report) the table reads.
type ginkgoSuite struct {
	SuitePath        string
	SuiteDescription string
	SuiteSucceeded   bool
	RunTime          time.Duration
	SpecReports      []struct {
		ContainerHierarchyTexts []string
		LeafNodeText            string
		LeafNodeType            string
		State                   string
		Failure                 struct {
			Message  string
			Location struct {
				FileName   string
				LineNumber int
			}
		}
	}
}

// ReadGinkgo reads a Ginkgo JSON report (--json-report) and returns a row per suite in it.
func ReadGinkgo(r io.Reader) ([]Suite, error) {
	var reports []ginkgoSuite
	if err := json.NewDecoder(r).Decode(&reports); err != nil {
		return nil, fmt.Errorf("reading a Ginkgo JSON report: %w", err)
	}
	out := make([]Suite, 0, len(reports))
	for _, rep := range reports {
		s := Suite{Name: rep.SuitePath, Wall: rep.RunTime, Specs: true, Result: "ok"}
		if s.Name == "" {
			s.Name = rep.SuiteDescription
		}
		if !rep.SuiteSucceeded {
			s.Result = "FAIL"
		}
		for _, spec := range rep.SpecReports {
			if spec.LeafNodeType != "It" {
				continue
			}
			switch spec.State {
			case "passed":
				s.Passed++
			case "skipped", "pending":
				s.Skipped++
			default:
				s.Failed++
				f := Failure{Name: strings.Join(append(slices.Clone(spec.ContainerHierarchyTexts), spec.LeafNodeText), " "),
					Message: spec.Failure.Message}
				if loc := spec.Failure.Location; loc.FileName != "" {
					f.Location = fmt.Sprintf("%s:%d", loc.FileName, loc.LineNumber)
				}
				s.Failures = append(s.Failures, f)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// ReadSteps reads the timings of the steps that run no tests: a line each, "<seconds> <exit
// status> <name>", as hack/test.sh writes them.
func ReadSteps(r io.Reader) ([]Suite, error) {
	var out []Suite
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.SplitN(strings.TrimSpace(sc.Text()), " ", 3)
		if len(fields) != 3 {
			continue
		}
		secs, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("step timing %q: %w", sc.Text(), err)
		}
		result := "ok"
		if fields[1] != "0" {
			result = "FAIL"
		}
		out = append(out, Suite{Name: fields[2], Wall: time.Duration(secs * float64(time.Second)), Step: true, Result: result})
	}
	return out, sc.Err()
}

// Table writes the table: the steps first, then the suites, slowest first, each with its wall
// time, what it counted and its result; then the totals, ending with the plain line
// "N passed, N failed, N skipped" that a CI log reader looks for. The module path prefix is
// dropped from package names.
func Table(w io.Writer, modulePrefix string, total time.Duration, suites []Suite) error {
	var steps, tests []Suite
	for _, s := range suites {
		if s.Step {
			steps = append(steps, s)
		} else {
			tests = append(tests, s)
		}
	}
	sort.SliceStable(tests, func(i, j int) bool { return tests[i].Wall > tests[j].Wall })
	width := len("suite")
	name := func(s Suite) string {
		n := strings.TrimPrefix(s.Name, modulePrefix)
		if n == "" {
			n = "."
		}
		return n
	}
	for _, s := range suites {
		width = max(width, len(name(s)))
	}
	var b strings.Builder
	row := func(n, wall, counted, result string) {
		fmt.Fprintf(&b, "%-*s  %9s  %-26s  %s\n", width, n, wall, counted, result)
	}
	var passed, failed, skipped int
	var stepWall, testWall time.Duration
	if len(steps) > 0 {
		row("step", "wall", "", "result")
		for _, s := range steps {
			stepWall += s.Wall
			row(name(s), seconds(s.Wall), "", s.Result)
		}
		row("(steps)", seconds(stepWall), "", "")
		b.WriteString("\n")
	}
	row("suite", "wall", "tests", "result")
	for _, s := range tests {
		testWall += s.Wall
		passed, failed, skipped = passed+s.Passed, failed+s.Failed, skipped+s.Skipped
		unit := "tests"
		if s.Specs {
			unit = "specs"
		}
		counted := fmt.Sprintf("%d %s", s.Passed+s.Failed+s.Skipped, unit)
		if s.Failed > 0 {
			counted += fmt.Sprintf(", %d failed", s.Failed)
		}
		if s.Skipped > 0 {
			counted += fmt.Sprintf(", %d skipped", s.Skipped)
		}
		row(name(s), seconds(s.Wall), counted, s.Result)
	}
	row("(suites, summed)", seconds(testWall), "", "")
	writeFailures(&b, modulePrefix, tests)
	if total > 0 {
		fmt.Fprintf(&b, "\nwall time of the run: %s (suites run side by side, so their sum is larger)\n", seconds(total))
	}
	fmt.Fprintf(&b, "%d passed, %d failed, %d skipped\n", passed, failed, skipped)
	_, err := io.WriteString(w, b.String())
	return err
}

// failureLines bounds what a failure repeats under the table: the first lines of a spec's
// failure message (where Gomega says what failed), the last lines a test logged (where it
// stopped), each cut to failureWidth characters; at most maxFailures are repeated.
const (
	failureLines = 12
	failureWidth = 240
	maxFailures  = 10
)

// goTestFrame matches the lines go test writes around a test's own output ("=== RUN",
// "--- FAIL: T (1.00s)", "=== PAUSE", "=== CONT").
var goTestFrame = regexp.MustCompile(`^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|FAIL|SKIP):)`)

// writeFailures repeats the failed tests and specs under the table, each with where it failed
// and the first failureLines lines of its Message.
func writeFailures(b *strings.Builder, modulePrefix string, suites []Suite) {
	n := 0
	for _, s := range suites {
		for _, f := range s.Failures {
			if n == 0 {
				b.WriteString("\nfailed (what each reported, cut short; the whole output is above and in the artifacts):\n")
			}
			if n++; n > maxFailures {
				continue
			}
			fmt.Fprintf(b, "- %s: %s\n", strings.TrimPrefix(s.Name, modulePrefix), f.Name)
			if f.Location != "" {
				fmt.Fprintf(b, "  at %s\n", strings.TrimPrefix(f.Location, modulePrefix))
			}
			lines := strings.Split(f.Message, "\n")
			for _, l := range lines[:min(len(lines), failureLines)] {
				if l = strings.TrimRight(l, " \t"); l == "" {
					continue
				}
				if len(l) > failureWidth {
					l = l[:failureWidth] + " …"
				}
				fmt.Fprintf(b, "    %s\n", l)
			}
		}
	}
	if n > maxFailures {
		fmt.Fprintf(b, "(and %d more)\n", n-maxFailures)
	}
}

func lastN(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}

// Failed tells whether any row failed or was cut short.
func Failed(suites []Suite) bool {
	for _, s := range suites {
		if s.Result != "ok" || s.Failed > 0 {
			return true
		}
	}
	return false
}

// ErrNoTests is returned by Check when the rows count no test at all.
var ErrNoTests = errors.New("no test ran")

// Check returns ErrNoTests when no row counted a test.
func Check(suites []Suite) error {
	for _, s := range suites {
		if !s.Step && s.Passed+s.Failed > 0 {
			return nil
		}
	}
	return ErrNoTests
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.0f s", d.Seconds()) }

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
