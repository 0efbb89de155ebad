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

// Command testreport is the test command's reporter (hack/test.sh):
//
//	go test -json ./... | testreport echo RAW.json   # prints what go test would, keeps the stream
//	testreport table [-total SECONDS] [-prefix P] FILE...
//	testreport times RAW.json >TIMES        # how long each package ran
//	testreport order TIMES <PACKAGES        # the packages, the longest first
//
// table prints the per-suite time table from `go test -json` streams (*.json), Ginkgo JSON
// reports (*.ginkgo.json) and step timings (*.steps), and exits 1 when a row failed or no test
// ran at all. times and order let the next run start its longest test binaries first; order
// reads a TIMES file that does not exist as empty.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test/support/testreport"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: testreport echo RAW.json | table [-total SECONDS] [-prefix P] FILE... | times RAW.json | order TIMES")
	}
	switch args[0] {
	case "echo":
		if len(args) != 2 {
			return errors.New("usage: testreport echo RAW.json")
		}
		raw, err := os.Create(args[1])
		if err != nil {
			return err
		}
		if err := testreport.Echo(stdin, raw, stdout); err != nil {
			_ = raw.Close()
			return err
		}
		return raw.Close()
	case "table":
		return table(args[1:], stdout)
	case "times":
		if len(args) != 2 {
			return errors.New("usage: testreport times RAW.json")
		}
		suites, err := readFile(args[1])
		if err != nil {
			return err
		}
		return testreport.WriteTimes(stdout, suites)
	case "order":
		if len(args) != 2 {
			return errors.New("usage: testreport order TIMES <PACKAGES")
		}
		return order(args[1], stdin, stdout)
	default:
		return fmt.Errorf("unknown command %q (echo, table, times or order)", args[0])
	}
}

func table(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("table", flag.ContinueOnError)
	total := fs.Float64("total", 0, "wall time of the whole run, in seconds")
	prefix := fs.String("prefix", "", "module path prefix dropped from package names")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var rows []testreport.Suite
	for _, path := range fs.Args() {
		got, err := readFile(path)
		if err != nil {
			return err
		}
		rows = append(rows, got...)
	}
	if err := testreport.Table(stdout, *prefix, time.Duration(*total*float64(time.Second)), rows); err != nil {
		return err
	}
	if testreport.Failed(rows) {
		return errors.New("a suite or step failed (see the table)")
	}
	return testreport.Check(rows)
}

// order prints the packages of stdin (one per line or word) the longest first, as the times
// file at path has them.
func order(path string, stdin io.Reader, stdout io.Writer) error {
	times := map[string]time.Duration{}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// The first run: no times yet.
	case err != nil:
		return err
	default:
		times, err = testreport.ReadTimes(f)
		_ = f.Close()
		if err != nil {
			return err
		}
	}
	in, err := io.ReadAll(stdin)
	if err != nil {
		return err
	}
	for _, p := range testreport.Order(strings.Fields(string(in)), times) {
		if _, err := fmt.Fprintln(stdout, p); err != nil {
			return err
		}
	}
	return nil
}

func readFile(path string) ([]testreport.Suite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	switch {
	case strings.HasSuffix(path, ".steps"):
		return testreport.ReadSteps(f)
	case strings.HasSuffix(path, ".ginkgo.json"):
		suites, err := testreport.ReadGinkgo(f)
		// Ginkgo names a suite by its absolute folder: show it from the working directory.
		if wd, werr := os.Getwd(); werr == nil {
			for i := range suites {
				if rel, rerr := filepath.Rel(wd, suites[i].Name); rerr == nil && !strings.HasPrefix(rel, "..") {
					suites[i].Name = rel + " (ginkgo)"
				}
			}
		}
		return suites, err
	case strings.HasSuffix(path, ".json"):
		return testreport.ReadGoTest(f)
	default:
		return nil, fmt.Errorf("%s: not a .steps, .ginkgo.json or .json file", path)
	}
}
