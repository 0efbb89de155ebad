module github.com/openshift-assisted/cluster-api-provider-openshift-assisted/test

go 1.25.0

// assisted-service/api requires models@v0.0.0 (a placeholder): pin both to the newest served
// version that compiles with controller-runtime v0.23 (newer ones are not served by the mirror).
replace (
	github.com/openshift/assisted-service/api => github.com/openshift/assisted-service/api v0.0.0-20240529165317-6b26a25e2ae7
	github.com/openshift/assisted-service/models => github.com/openshift/assisted-service/models v0.0.0-20240529165317-6b26a25e2ae7
)

// Sibling modules of this repository (go mod tidy ignores go.work).
replace (
	github.com/openshift-assisted/cluster-api-provider-openshift-assisted/bootstrap => ../bootstrap
	github.com/openshift-assisted/cluster-api-provider-openshift-assisted/controlplane => ../controlplane
	github.com/openshift-assisted/cluster-api-provider-openshift-assisted/infrastructure => ../infrastructure
	github.com/openshift-assisted/cluster-api-provider-openshift-assisted/pkg => ../pkg
)

// assisted-service/models pulls a 2022 google.golang.org/genproto that still holds the googleapis
// packages now published as their own modules ("ambiguous import"); this version no longer does.
replace google.golang.org/genproto => google.golang.org/genproto v0.0.0-20250603155806-513f23925822
