// An empty stand-in for github.com/moby/moby, used by test/go.mod's replace: the 2023
// assisted-service root module (pulled by assisted-service/models) requires
// github.com/moby/moby v20.10.24+incompatible, whose api/ and client/ folders hold the same
// packages as the github.com/moby/moby/api and .../client modules Cluster API's test framework
// imports ("ambiguous import"). Nothing this repository builds imports the old module's packages.
module github.com/moby/moby

go 1.25.0
