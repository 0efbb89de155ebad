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
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// WriteTimes writes how long each finished test package of suites ran, a "seconds import-path"
// line each: what Order reads in the next run.
func WriteTimes(w io.Writer, suites []Suite) error {
	for _, s := range suites {
		if s.Step || s.Result == "incomplete" {
			continue
		}
		if _, err := fmt.Fprintf(w, "%.1f %s\n", s.Wall.Seconds(), s.Name); err != nil {
			return err
		}
	}
	return nil
}

// ReadTimes reads what WriteTimes wrote; lines it cannot read are skipped (the file is a hint).
func ReadTimes(r io.Reader) (map[string]time.Duration, error) {
	times := map[string]time.Duration{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		secs, pkg, ok := strings.Cut(strings.TrimSpace(sc.Text()), " ")
		f, err := strconv.ParseFloat(secs, 64)
		if !ok || err != nil || pkg == "" {
			continue
		}
		times[pkg] = time.Duration(f * float64(time.Second))
	}
	return times, sc.Err()
}

// Order returns pkgs in the order go test should start them so that the phase ends soonest: the
// longest first, as times (an earlier run) has them, so that no long package starts last and
// runs alone at the end. A package times does not know (a new one) goes first, as it may be
// long; the others keep their order among equals.
func Order(pkgs []string, times map[string]time.Duration) []string {
	out := append([]string(nil), pkgs...)
	sort.SliceStable(out, func(i, j int) bool {
		ti, knownI := times[out[i]]
		tj, knownJ := times[out[j]]
		if knownI != knownJ {
			return !knownI
		}
		return ti > tj
	})
	return out
}
