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

package release

// The caches' bounds, for the tests.
const (
	MaxCachedDigests    = maxCachedDigests
	MaxCachedTags       = maxCachedTags
	MaxCachedTransports = maxCachedTransports
)

// WithCacheBounds returns r with caches of these sizes, for a test that fills them.
func WithCacheBounds(r *Reader, digests, tags, transports int) *Reader {
	r.bounds = cacheBounds{digests: digests, tags: tags, transports: transports}
	return r
}

// CachedEntries reports how many release contents, tags and transports r keeps.
func (r *Reader) CachedEntries() (digests, tags, transports int) {
	d, t, tr := r.caches()
	return d.Len(), t.Len(), tr.Len()
}
