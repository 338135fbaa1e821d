module github.com/toolnode/toolnode/sdk-go

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.49.0
	golang.org/x/text v0.43.0
)

require github.com/cespare/xxhash/v2 v2.3.0 // indirect
