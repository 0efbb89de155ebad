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

// Package fleet holds what the fleet benchmark (fleet_test.go) reads its figures with: the
// management API server's audit log, which tells every client's requests apart.
package fleet

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// AuditPolicy logs every request's metadata (who, verb, resource; no bodies: nothing secret),
// once: when its response completes, or when a watch's starts (a watch still open at the end
// never completes).
const AuditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// AuditArgs are the kube-apiserver flags of an audit log at path, with the policy in policyFile.
func AuditArgs(policyFile, path string) map[string]string {
	// The log is never rotated: --audit-log-maxsize 0 means lumberjack's default of 100 MB, which
	// a fleet of 500 clusters exceeds (the counter would read the new file from the old offset).
	return map[string]string{"audit-policy-file": policyFile, "audit-log-path": path, "audit-log-format": "json",
		"audit-log-maxbackup": "0", "audit-log-maxsize": "1000000"}
}

// Requests counts requests by client (user agent) and by "verb resource[/subresource]".
type Requests map[string]map[string]int

// Total is the number of requests the client ua sent.
func (r Requests) Total(ua string) int {
	n := 0
	for _, v := range r[ua] {
		n += v
	}
	return n
}

// AuditCounter counts the requests of an audit log as it grows.
type AuditCounter struct {
	path    string
	offset  int64
	partial []byte
	counts  Requests
}

// NewAuditCounter counts the requests of the audit log at path.
func NewAuditCounter(path string) *AuditCounter {
	return &AuditCounter{path: path, counts: Requests{}}
}

// auditEvent is what the counter reads of an audit.k8s.io/v1 Event.
type auditEvent struct {
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	RequestURI string `json:"requestURI"`
}

// Update reads what the log gained since the last call and returns the counts so far.
func (a *AuditCounter) Update() (Requests, error) {
	f, err := os.Open(a.path)
	if err != nil {
		if os.IsNotExist(err) {
			return a.counts, nil
		}
		return nil, fmt.Errorf("opening the audit log: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() < a.offset {
		return nil, fmt.Errorf("the audit log shrank from %d to %d bytes: it was rotated, and requests would be lost", a.offset, st.Size())
	}
	if _, err := f.Seek(a.offset, io.SeekStart); err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		a.offset += int64(len(line))
		if err == io.EOF {
			a.partial = append(a.partial, line...)
			return a.counts, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the audit log: %w", err)
		}
		if len(a.partial) > 0 {
			line = append(a.partial, line...)
			a.partial = nil
		}
		if err := a.count(bytes.TrimSpace(line)); err != nil {
			return nil, err
		}
	}
}

func (a *AuditCounter) count(line []byte) error {
	if len(line) == 0 {
		return nil
	}
	var e auditEvent
	if err := json.Unmarshal(line, &e); err != nil {
		return fmt.Errorf("an audit event: %w", err)
	}
	// A watch counts when it starts; any other request when it completes.
	if (e.Verb == "watch") != (e.Stage == "ResponseStarted") || (e.Stage != "ResponseStarted" && e.Stage != "ResponseComplete") {
		return nil
	}
	resource := ""
	if e.ObjectRef != nil {
		resource = e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			resource += "/" + e.ObjectRef.Subresource
		}
	}
	if resource == "" {
		resource, _, _ = strings.Cut(e.RequestURI, "?") // discovery, health
	}
	ua, _, _ := strings.Cut(e.UserAgent, "/")
	if a.counts[ua] == nil {
		a.counts[ua] = map[string]int{}
	}
	a.counts[ua][e.Verb+" "+resource]++
	return nil
}
