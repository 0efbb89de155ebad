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

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

const (
	// DefaultRegistry is the registry of DefaultRepository, the only one a Reader contacts when
	// no AllowedRegistries are set.
	DefaultRegistry = "quay.io"
	// AnyRegistry is the entry of AllowedRegistries that lets the Reader contact any registry:
	// whoever may annotate a control plane then makes the manager connect to any host.
	AnyRegistry = "*"
	// AllowedRegistriesFlag is the control-plane manager's flag that sets AllowedRegistries.
	AllowedRegistriesFlag = "--allowed-release-registries"
	// CAFileFlag is the control-plane manager's flag that names Reader.CAFile.
	CAFileFlag = "--release-registry-ca-file"
)

// Errors of the content of a release image (the registry answered, the image is not a release).
var (
	errNoImageReferences   = errors.New("file not found in any layer")
	errNotImageStream      = errors.New("not an ImageStream")
	errNoKubernetesVersion = errors.New("no Kubernetes version")
	errNoPlatformImage     = errors.New("the image index lists no image of a platform")
)

// RegistryNotAllowedError is the error of a read the Reader refused without contacting the
// registry: its host is not in AllowedRegistries.
type RegistryNotAllowedError struct {
	// Host is the registry of the image (host or host:port).
	Host string
	// Allowed are the registries the Reader may contact.
	Allowed []string
}

func (e *RegistryNotAllowedError) Error() string {
	return fmt.Sprintf("registry %s is not allowed: the control-plane manager reads release images only from %s; "+
		"add %s to its %s flag, or use a repository on an allowed registry",
		e.Host, strings.Join(e.Allowed, ", "), e.Host, AllowedRegistriesFlag)
}

// allowedRegistries returns the registries r may contact (DefaultRegistry when none are set).
func (r *Reader) allowedRegistries() []string {
	if len(r.AllowedRegistries) == 0 {
		return []string{DefaultRegistry}
	}
	return r.AllowedRegistries
}

// checkRegistry refuses a registry that is not allowed, before anything is sent to it.
func (r *Reader) checkRegistry(host string) error {
	allowed := r.allowedRegistries()
	if slices.Contains(allowed, AnyRegistry) || slices.ContainsFunc(allowed, func(a string) bool {
		return strings.EqualFold(strings.TrimSpace(a), host)
	}) {
		return nil
	}
	return &RegistryNotAllowedError{Host: host, Allowed: allowed}
}

// Summary describes why a release image could not be read, in words of this project only: what
// a registry or a network answered is reduced to its class (HTTP status and standard registry
// error codes, "connection refused", "TLS certificate not trusted", ...), never copied, so that
// it can go into a condition that whoever reads the control plane sees. The full error belongs in
// the manager's log (see LogMessage).
func Summary(err error) string {
	var notAllowed *RegistryNotAllowedError
	if errors.As(err, &notAllowed) {
		return notAllowed.Error()
	}
	var stage *stageError
	if errors.As(err, &stage) {
		return stage.stage + ": " + cause(stage.err)
	}
	return cause(err)
}

// cause classifies err.
func cause(err error) string {
	var terr *transport.Error
	var dnsErr *net.DNSError
	var unknownAuthority x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	var recordHeader tls.RecordHeaderError
	var netErr net.Error
	var badName *name.ErrBadName
	var refusedErr *credentialsError
	var accessErr *accessError
	switch {
	case errors.As(err, &badName):
		return "not a valid image reference"
	case errors.Is(err, errUnreadableCAFile):
		return errUnreadableCAFile.Error()
	case errors.Is(err, errBadPullSecret), errors.Is(err, errBadCABundle):
		return err.Error()
	case errors.As(err, &accessErr):
		return accessErr.Error()
	case errors.As(err, &refusedErr) && errors.As(err, &terr):
		return refusedErr.summary(answerStatus(terr))
	case errors.As(err, &terr):
		return registryAnswer(terr)
	case errors.Is(err, errNoImageReferences):
		return "the image holds no " + ImageReferencesPath + " (is it an OpenShift release image?)"
	case errors.Is(err, errNotImageStream):
		return ImageReferencesPath + " is not an ImageStream (is it an OpenShift release image?)"
	case errors.Is(err, errNoKubernetesVersion):
		return "no hyperkube or kube-apiserver image of the release names its Kubernetes version"
	case errors.Is(err, errNoPlatformImage):
		return "the release is an image index (multi-architecture) that lists no image of a platform (is it an OpenShift release image?)"
	case errors.As(err, &dnsErr):
		return "the registry's host name does not resolve"
	case errors.As(err, &unknownAuthority), errors.As(err, &hostnameErr), errors.As(err, &invalidCert):
		return "the registry's TLS certificate is not trusted: add its CA to the ca-bundle.crt key of the ConfigMap of spec.config.imageRegistryRef, or to the manager's " + CAFileFlag
	case errors.As(err, &recordHeader):
		return "the registry does not speak TLS"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "the registry did not answer in time"
	case errors.Is(err, context.Canceled):
		return "the read was interrupted"
	case errors.As(err, &netErr):
		return "the registry cannot be reached (" + networkClass(err) + ")"
	default:
		return "unexpected error (see the control-plane manager's log)"
	}
}

// registryAnswer names an HTTP answer of a registry (answerStatus) and what it means.
func registryAnswer(e *transport.Error) string {
	s := "the registry answered " + answerStatus(e)
	switch e.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		s += ": the image is not public, and the manager has no credentials for it"
	case http.StatusNotFound:
		s += ": no such image (check distributionVersion and the repository)"
	case http.StatusTooManyRequests:
		s += ": rate limited"
	}
	return s
}

// answerStatus is the HTTP status of a registry's answer and the standard error codes of the
// distribution specification it carried (any other code or message is the registry's text).
func answerStatus(e *transport.Error) string {
	s := fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	var codes []string
	for _, d := range e.Errors {
		if standardCodes[d.Code] && !slices.Contains(codes, string(d.Code)) {
			codes = append(codes, string(d.Code))
		}
	}
	if len(codes) > 0 {
		s += " (" + strings.Join(codes, ", ") + ")"
	}
	return s
}

var standardCodes = map[transport.ErrorCode]bool{
	transport.BlobUnknownErrorCode: true, transport.BlobUploadInvalidErrorCode: true,
	transport.BlobUploadUnknownErrorCode: true, transport.DigestInvalidErrorCode: true,
	transport.ManifestBlobUnknownErrorCode: true, transport.ManifestInvalidErrorCode: true,
	transport.ManifestUnknownErrorCode: true, transport.ManifestUnverifiedErrorCode: true,
	transport.NameInvalidErrorCode: true, transport.NameUnknownErrorCode: true,
	transport.SizeInvalidErrorCode: true, transport.TagInvalidErrorCode: true,
	transport.UnauthorizedErrorCode: true, transport.DeniedErrorCode: true,
	transport.UnsupportedErrorCode: true, transport.TooManyRequestsErrorCode: true,
	transport.UnknownErrorCode: true, transport.UnavailableErrorCode: true,
}

// networkClass names a network error without its addresses.
func networkClass(err error) string {
	msg := err.Error()
	for _, c := range []string{"connection refused", "connection reset", "no route to host", "network is unreachable", "EOF"} {
		if strings.Contains(msg, c) {
			return c
		}
	}
	return "network error"
}

// maxLogMessage bounds the error text LogMessage returns: a registry's answer is its own text, of
// any length.
const maxLogMessage = 2048

// LogMessage returns the full text of a read error for the manager's log, cut at a sane length.
// It carries what the registry answered, never credentials: those travel in request headers,
// which no error of the registry client quotes.
func LogMessage(err error) string {
	msg := err.Error()
	if len(msg) > maxLogMessage {
		msg = msg[:maxLogMessage] + "... (cut)"
	}
	return msg
}

// stageError is a read error with the step it happened in.
type stageError struct {
	stage string
	err   error
}

func (e *stageError) Error() string { return e.stage + ": " + e.err.Error() }
func (e *stageError) Unwrap() error { return e.err }
