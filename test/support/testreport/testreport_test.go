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

package testreport

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// stream is a `go test -json` run of three packages side by side: one with two tests (one of
// them with a subtest) and a skip, one Ginkgo suite, and one that fails.
const stream = `{"Action":"start","Package":"example.com/m/a"}
{"Action":"run","Package":"example.com/m/a","Test":"TestOne"}
{"Action":"start","Package":"example.com/m/sys"}
{"Action":"output","Package":"example.com/m/a","Test":"TestOne","Output":"=== RUN   TestOne\n"}
{"Action":"run","Package":"example.com/m/a","Test":"TestOne/sub"}
{"Action":"pass","Package":"example.com/m/a","Test":"TestOne/sub","Elapsed":0.1}
{"Action":"pass","Package":"example.com/m/a","Test":"TestOne","Elapsed":0.2}
{"Action":"output","Package":"example.com/m/sys","Test":"TestSystem","Output":"Ran 3 of 4 Specs in 61.2 seconds\n"}
{"Action":"skip","Package":"example.com/m/a","Test":"TestTwo","Elapsed":0}
{"Action":"pass","Package":"example.com/m/a","Test":"TestThree","Elapsed":0}
{"Action":"output","Package":"example.com/m/a","Output":"ok  \texample.com/m/a\t1.5s\n"}
{"Action":"pass","Package":"example.com/m/a","Elapsed":1.5}
{"Action":"output","Package":"example.com/m/sys","Test":"TestSystem","Output":"\u001b[38;5;10m\u001b[1mSUCCESS!\u001b[0m -- \u001b[38;5;10m\u001b[1m3 Passed\u001b[0m | \u001b[38;5;9m\u001b[1m0 Failed\u001b[0m | \u001b[38;5;11m\u001b[1m0 Pending\u001b[0m | \u001b[38;5;14m\u001b[1m1 Skipped\u001b[0m\n"}
{"Action":"pass","Package":"example.com/m/sys","Test":"TestSystem","Elapsed":61.3}
{"Action":"output","Package":"example.com/m/sys","Output":"ok  \texample.com/m/sys\t62s\n"}
{"Action":"pass","Package":"example.com/m/sys","Elapsed":62}
{"ImportPath":"example.com/m/b","Action":"build-output","Output":"# example.com/m/b\n"}
{"Action":"start","Package":"example.com/m/c"}
{"Action":"run","Package":"example.com/m/c","Test":"TestBroken"}
{"Action":"output","Package":"example.com/m/c","Test":"TestBroken","Output":"=== RUN   TestBroken\n"}
{"Action":"output","Package":"example.com/m/c","Test":"TestBroken","Output":"    c_test.go:9: wanted 2\n"}
{"Action":"output","Package":"example.com/m/c","Test":"TestBroken","Output":"--- FAIL: TestBroken (0.30s)\n"}
{"Action":"fail","Package":"example.com/m/c","Test":"TestBroken","Elapsed":0.3}
{"Action":"output","Package":"example.com/m/c","Output":"FAIL\texample.com/m/c\t0.4s\n"}
{"Action":"fail","Package":"example.com/m/c","Elapsed":0.4}
{"Action":"output","Package":"example.com/m/none","Output":"?   \texample.com/m/none\t[no test files]\n"}
{"Action":"skip","Package":"example.com/m/none","Elapsed":0.001}
{"Action":"start","Package":"example.com/m/slow"}
{"Action":"output","Package":"example.com/m/slow","Output":"panic: test timed out\n"}
`

func TestEchoPrintsWhatGoTestWould(t *testing.T) {
	var raw, out bytes.Buffer
	if err := Echo(strings.NewReader(stream), &raw, &out); err != nil {
		t.Fatal(err)
	}
	if raw.String() != stream {
		t.Errorf("the raw stream was not kept as it came:\n%s", raw.String())
	}
	want := "ok  \texample.com/m/a\t1.5s\n" +
		"ok  \texample.com/m/sys\t62s\n" +
		"# example.com/m/b\n" +
		"=== RUN   TestBroken\n    c_test.go:9: wanted 2\n--- FAIL: TestBroken (0.30s)\nFAIL\texample.com/m/c\t0.4s\n" +
		"?   \texample.com/m/none\t[no test files]\n" +
		"panic: test timed out\n(example.com/m/slow did not finish)\n"
	if out.String() != want {
		t.Errorf("echo printed\n%q\nwant\n%q", out.String(), want)
	}
}

func TestReadGoTestCountsTopLevelTestsOrGinkgoSpecs(t *testing.T) {
	got, err := ReadGoTest(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	want := []Suite{
		{Name: "example.com/m/a", Wall: 1500 * time.Millisecond, Passed: 2, Skipped: 1, Result: "ok"},
		{Name: "example.com/m/sys", Wall: 62 * time.Second, Passed: 3, Skipped: 1, Specs: true, Result: "ok"},
		{Name: "example.com/m/c", Wall: 400 * time.Millisecond, Failed: 1, Result: "FAIL",
			Failures: []Failure{{Name: "TestBroken", Message: "    c_test.go:9: wanted 2"}}},
		{Name: "example.com/m/slow", Result: "incomplete"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d rows, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("row %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if !Failed(got) {
		t.Error("Failed: a failed and an incomplete package were not seen")
	}
}

func TestReadGinkgoCountsItsSpecs(t *testing.T) {
	report := `[{"SuitePath":"/r/test/system","SuiteDescription":"System","SuiteSucceeded":false,"RunTime":90000000000,
	"SpecReports":[{"LeafNodeType":"It","State":"passed"},{"ContainerHierarchyTexts":["A cluster"],"LeafNodeText":"installs",
	"LeafNodeType":"It","State":"failed","Failure":{"Message":"Expected\n    <int>: 0\nto equal\n    <int>: 1",
	"Location":{"FileName":"/r/test/system/system_test.go","LineNumber":510}}},
	{"LeafNodeType":"It","State":"skipped"},{"LeafNodeType":"SynchronizedBeforeSuite","State":"passed"}]}]`
	got, err := ReadGinkgo(strings.NewReader(report))
	if err != nil {
		t.Fatal(err)
	}
	want := Suite{Name: "/r/test/system", Wall: 90 * time.Second, Passed: 1, Failed: 1, Skipped: 1, Specs: true, Result: "FAIL",
		Failures: []Failure{{Name: "A cluster installs", Location: "/r/test/system/system_test.go:510",
			Message: "Expected\n    <int>: 0\nto equal\n    <int>: 1"}}}
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("got %+v, want [%+v]", got, want)
	}
}

func TestReadSteps(t *testing.T) {
	got, err := ReadSteps(strings.NewReader("12.5 0 lint\n3 2 vet\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Suite{
		{Name: "lint", Wall: 12500 * time.Millisecond, Step: true, Result: "ok"},
		{Name: "vet", Wall: 3 * time.Second, Step: true, Result: "FAIL"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := ReadSteps(strings.NewReader("x 0 lint\n")); err == nil {
		t.Error("a malformed timing was accepted")
	}
}

func TestTableListsStepsThenSuitesSlowestFirstAndEndsWithTheCounts(t *testing.T) {
	rows := []Suite{
		{Name: "lint", Wall: 20 * time.Second, Step: true, Result: "ok"},
		{Name: "example.com/m/a", Wall: 2 * time.Second, Passed: 4, Result: "ok"},
		{Name: "example.com/m/sys", Wall: 600 * time.Second, Passed: 10, Skipped: 2, Specs: true, Result: "ok"},
	}
	var b bytes.Buffer
	if err := Table(&b, "example.com/m/", 700*time.Second, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	var suites []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && (f[0] == "a" || f[0] == "sys") {
			suites = append(suites, f[0])
		}
	}
	if strings.Join(suites, ",") != "sys,a" {
		t.Errorf("suites not slowest first: %v\n%s", suites, b.String())
	}
	for _, want := range []string{"lint ", "12 specs, 2 skipped", "wall time of the run: 700 s"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
	if last := lines[len(lines)-1]; last != "14 passed, 0 failed, 2 skipped" {
		t.Errorf("last line %q", last)
	}
}

func TestTableRepeatsWhatFailedUnderIt(t *testing.T) {
	long := strings.Repeat("x", 300)
	var msg []string
	for i := range 20 {
		msg = append(msg, fmt.Sprintf("line %d", i))
	}
	rows := []Suite{
		{Name: "example.com/m/sys", Wall: 600 * time.Second, Passed: 1, Failed: 1, Specs: true, Result: "FAIL",
			Failures: []Failure{{Name: "A cluster installs", Location: "example.com/m/sys/system_test.go:510", Message: strings.Join(msg, "\n")}}},
		{Name: "example.com/m/c", Wall: time.Second, Failed: 1, Result: "FAIL",
			Failures: []Failure{{Name: "TestBroken", Message: long}}},
	}
	var b bytes.Buffer
	if err := Table(&b, "example.com/m/", 0, rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"- sys: A cluster installs\n  at sys/system_test.go:510\n", "    line 0\n", "    line 11\n", "- c: TestBroken\n    " + long[:240] + " …\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the failures lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "line 12\n") {
		t.Errorf("a failure was not cut to its first %d lines:\n%s", failureLines, out)
	}
	if !strings.HasSuffix(out, "1 passed, 2 failed, 0 skipped\n") {
		t.Errorf("the counts are not the last line:\n%s", out)
	}
}

func TestCheckWantsATest(t *testing.T) {
	if err := Check([]Suite{{Name: "lint", Step: true, Result: "ok"}}); !errors.Is(err, ErrNoTests) {
		t.Errorf("steps alone: %v", err)
	}
	if err := Check([]Suite{{Name: "a", Passed: 1, Result: "ok"}}); err != nil {
		t.Errorf("one test: %v", err)
	}
}
