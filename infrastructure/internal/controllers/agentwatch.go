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

package controllers

import (
	"io"
	"mime"
	"net/http"
	"strings"

	jsoniter "github.com/json-iterator/go"
	aiv1beta1 "github.com/openshift/assisted-service/api/v1beta1"
)

// TrimAgentWatches wraps the transport of the manager's clients so that the Agent watches its
// caches open (client-go's informers list with a watch: sendInitialEvents) reach their decoder
// without the parts of each Agent that TrimAgent drops anyway: the managed fields, and of the
// status everything but the conditions, the host state and the inventory fields TrimAgent keeps
// (agentWatchShape). A served Agent is about 13 KB of JSON, most of it the inventory and the
// validations; client-go scans each watch event's JSON three to four times before the transform
// sees it (the frame, the envelope, the kind, the object), which at 10,000 Agents was most of the
// manager's start-up. Nothing else is touched: a single Agent read, an Agent list that is not a
// watch, every other resource, a response that is not 200 or not plain JSON. The result is what
// TrimAgent makes of the whole Agent (TestTrimmedWatchKeepsWhatTrimAgentKeeps).
func TrimAgentWatches(next http.RoundTripper) http.RoundTripper {
	return &agentWatchTrimmer{next: next}
}

type agentWatchTrimmer struct{ next http.RoundTripper }

func (t *agentWatchTrimmer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || !isAgentWatch(req) || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "" {
		return resp, err
	}
	if media, _, perr := mime.ParseMediaType(resp.Header.Get("Content-Type")); perr != nil || media != "application/json" {
		return resp, nil //nolint:nilerr // a body that is not plain JSON passes as it came
	}
	resp.Body = trimAgentStream(resp.Body)
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return resp, nil
}

// isAgentWatch tells a watch of Agents, of one namespace or all:
// GET /apis/agent-install.openshift.io/<version>[/namespaces/<namespace>]/agents?watch=true.
func isAgentWatch(req *http.Request) bool {
	if req.Method != http.MethodGet {
		return false
	}
	if w := req.URL.Query().Get("watch"); w != "true" && w != "1" {
		return false
	}
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	switch {
	case len(parts) == 4:
	case len(parts) == 6 && parts[3] == "namespaces":
	default:
		return false
	}
	return parts[0] == "apis" && parts[1] == aiv1beta1.GroupVersion.Group && parts[len(parts)-1] == "agents"
}

// shape says which fields of a JSON object are kept: those fields names with a nil shape are
// kept as they are, those with one are trimmed by it (each element, for an array), and the others
// are kept when keepOthers, dropped when not. A field named with dropField is dropped. A value
// that is not an object or an array of objects is kept as it is.
type shape struct {
	keepOthers bool
	fields     map[string]*shape
}

var dropField = &shape{}

// agentWatchShape is what TrimAgent reads of an Agent, in a watch event (its object) or a list
// (its items); everything else of the event or list is kept.
var agentWatchShape = func() *shape {
	agent := &shape{keepOthers: true, fields: map[string]*shape{
		"metadata": {keepOthers: true, fields: map[string]*shape{"managedFields": dropField}},
		"status": {fields: map[string]*shape{
			"conditions": nil,
			"debugInfo":  {fields: map[string]*shape{"state": nil}},
			"inventory": {fields: map[string]*shape{
				"hostname":   nil,
				"cpu":        {fields: map[string]*shape{"count": nil, "architecture": nil}},
				"memory":     {fields: map[string]*shape{"physicalBytes": nil}},
				"disks":      {fields: map[string]*shape{"sizeBytes": nil}},
				"interfaces": {fields: map[string]*shape{"macAddress": nil, "ipV4Addresses": nil, "ipV6Addresses": nil}},
			}},
		}},
	}}
	return &shape{keepOthers: true, fields: map[string]*shape{"object": agent, "items": agent}}
}()

// watchBuffer is the size of the reads from the API server's stream.
const watchBuffer = 32 << 10

// trimAgentStream returns body's stream of JSON values (watch events), each trimmed by
// agentWatchShape, as it comes: a goroutine reads body and writes each trimmed event, with a
// newline, as soon as it has read it. Closing the returned body closes body, which ends the
// goroutine. A stream that is not JSON ends with the parser's error.
func trimAgentStream(body io.ReadCloser) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		iter := jsoniter.Parse(jsoniter.ConfigDefault, body, watchBuffer)
		var out []byte
		for iter.WhatIsNext() != jsoniter.InvalidValue {
			out = appendTrimmed(iter, out[:0], agentWatchShape)
			if iter.Error != nil {
				break
			}
			if _, err := pw.Write(append(out, '\n')); err != nil {
				return // the reader is closed
			}
		}
		err := iter.Error
		if err == io.EOF { //nolint:errorlint // the iterator keeps the reader's io.EOF as it is
			err = nil
		}
		_ = pw.CloseWithError(err)
	}()
	return &trimmedBody{PipeReader: pr, body: body}
}

type trimmedBody struct {
	*io.PipeReader
	body io.ReadCloser
}

func (b *trimmedBody) Close() error {
	_ = b.PipeReader.Close()
	return b.body.Close()
}

// appendTrimmed appends the next JSON value of iter to out, trimmed by s when it is an object or an
// array.
func appendTrimmed(iter *jsoniter.Iterator, out []byte, s *shape) []byte {
	switch iter.WhatIsNext() {
	case jsoniter.ObjectValue:
		out = append(out, '{')
		first := true
		iter.ReadObjectCB(func(iter *jsoniter.Iterator, field string) bool {
			sub, named := s.fields[field]
			if sub == dropField || (!named && !s.keepOthers) {
				iter.Skip()
				return iter.Error == nil
			}
			if !first {
				out = append(out, ',')
			}
			first = false
			out = appendKey(out, field)
			if sub == nil {
				out = iter.SkipAndAppendBytes(out)
			} else {
				out = appendTrimmed(iter, out, sub)
			}
			return iter.Error == nil
		})
		return append(out, '}')
	case jsoniter.ArrayValue:
		out = append(out, '[')
		first := true
		iter.ReadArrayCB(func(iter *jsoniter.Iterator) bool {
			if !first {
				out = append(out, ',')
			}
			first = false
			out = appendTrimmed(iter, out, s)
			return iter.Error == nil
		})
		return append(out, ']')
	default:
		return iter.SkipAndAppendBytes(out)
	}
}

// appendKey appends a field name as a JSON string and a colon.
func appendKey(out []byte, field string) []byte {
	plain := true
	for i := 0; i < len(field) && plain; i++ {
		c := field[i]
		plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\'
	}
	if plain {
		out = append(out, '"')
		out = append(out, field...)
		return append(out, '"', ':')
	}
	quoted, _ := jsoniter.ConfigDefault.Marshal(field) // a string always encodes
	out = append(out, quoted...)
	return append(out, ':')
}
