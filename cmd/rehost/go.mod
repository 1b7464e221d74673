module github.com/rehost/rehost/cmd/rehost

go 1.26.0

// Until rehost is released, its modules are the ones in this repository.
replace (
	github.com/rehost/rehost => ../..
	github.com/rehost/rehost/pkg/mirror => ../../pkg/mirror
)

require (
	github.com/google/go-containerregistry v0.22.1
	github.com/rehost/rehost v0.0.0-00010101000000-000000000000
	github.com/rehost/rehost/pkg/mirror v0.0.0-00010101000000-000000000000
	github.com/spf13/cobra v1.10.2
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/crypto/x509roots/fallback v0.0.0-20261030153154-30a33513ff6d
)

require (
	github.com/docker/cli v29.7.2+incompatible // indirect
	github.com/docker/docker-credential-helpers v0.9.3 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/sirupsen/logrus v1.9.4 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
