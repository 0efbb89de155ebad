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

// Package fuzzpick turns the bytes of a Go fuzz input into the choices a fuzz test makes when it
// builds objects (which fields are set, to which of a few values), deterministically: the same
// input always builds the same objects, and the fuzzer's mutations of the bytes explore the
// shapes. Past the end of the input every choice is the first option.
package fuzzpick

import "strings"

// Picker reads choices from fuzz input.
type Picker struct {
	data []byte
	n    int
}

// New returns a Picker of data.
func New(data []byte) *Picker { return &Picker{data: data} }

func (p *Picker) next() byte {
	if p.n >= len(p.data) {
		return 0
	}
	b := p.data[p.n]
	p.n++
	return b
}

// Bool is one choice of two; false past the end of the input.
func (p *Picker) Bool() bool { return p.next()&1 == 1 }

// Intn is a choice in [0, n).
func (p *Picker) Intn(n int) int {
	if n <= 1 {
		return 0
	}
	return int(p.next()) % n
}

// Pick is one of options.
func (p *Picker) Pick(options ...string) string { return options[p.Intn(len(options))] }

// String is a short string drawn from the input itself (any bytes, so not always valid UTF-8 or
// a valid name), up to maxLen bytes.
func (p *Picker) String(maxLen int) string {
	n := p.Intn(maxLen + 1)
	var b strings.Builder
	for range n {
		b.WriteByte(p.next())
	}
	return b.String()
}

// Map is nil, empty, or a map of up to three entries with keys drawn from keys and values drawn
// from values, or, with anyValue (annotations, whose values the API server does not check), also
// made of the input: the shapes of labels and annotations the API server accepts, and the ones
// code must not assume away (a nil map, a key without the value it expects).
func (p *Picker) Map(keys, values []string, anyValue bool) map[string]string {
	switch p.Intn(3) {
	case 0:
		return nil
	case 1:
		return map[string]string{}
	}
	m := map[string]string{}
	for range 1 + p.Intn(3) {
		v := ""
		if len(values) > 0 {
			v = values[p.Intn(len(values))]
		}
		if anyValue && p.Bool() {
			v = p.String(12)
		}
		m[keys[p.Intn(len(keys))]] = v
	}
	return m
}
