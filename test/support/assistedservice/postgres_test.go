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

package assistedservice

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPostgresKeepsItsDataAcrossRestarts: a second server on the same folder finds the database
// the first created, as assisted-service's database outlives the service.
func TestPostgresKeepsItsDataAcrossRestarts(t *testing.T) {
	// Not t.TempDir(): its parent folder keeps the server's user out.
	parent, err := os.MkdirTemp("", "postgres-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o711); err != nil { // the server's user gets through
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "db")
	db, err := StartPostgres(t.Context(), dir, t.Output())
	if err != nil {
		t.Fatal(err)
	}
	sql := func(db *Postgres, q string) error {
		return db.run(t.Context(), "psql", "-h", "127.0.0.1", "-p", strconv.Itoa(db.Port), "-U", DatabaseUser, "-d", DatabaseName, "-v", "ON_ERROR_STOP=1", "-c", q)
	}
	if err := sql(db, "CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	if err := db.Stop(); err != nil {
		t.Fatal(err)
	}
	again, err := StartPostgres(t.Context(), dir, t.Output())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = again.Stop() })
	if err := sql(again, "SELECT n FROM kept WHERE n = 42"); err != nil {
		t.Fatalf("the database of the first server is gone: %v", err)
	}
}

// TestPostgresMissingSaysWhatToInstall: a POSTGRES_BIN_DIR without the server is refused with
// what to do.
func TestPostgresMissingSaysWhatToInstall(t *testing.T) {
	t.Setenv("POSTGRES_BIN_DIR", t.TempDir())
	_, err := StartPostgres(t.Context(), filepath.Join(t.TempDir(), "db"), nil)
	if err == nil || !strings.Contains(err.Error(), "POSTGRES_BIN_DIR") {
		t.Fatalf("StartPostgres = %v, want an error naming POSTGRES_BIN_DIR", err)
	}
}
