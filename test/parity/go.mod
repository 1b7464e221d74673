module github.com/rehost/rehost/test/parity

go 1.26.0

require (
	github.com/google/go-containerregistry v0.22.1
	github.com/rehost/rehost v0.0.0-00010101000000-000000000000
	go.yaml.in/yaml/v3 v3.0.6
)

require github.com/opencontainers/go-digest v1.0.0 // indirect

// Until rehost is released, its modules are the ones in this repository.
replace github.com/rehost/rehost => ../..
