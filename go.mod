module github.com/gobreakpad/gobreakpad

go 1.26.0

require (
	github.com/alecthomas/participle/v2 v2.1.4
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
	github.com/klauspost/compress v1.20.3
	github.com/ulikunitz/xz v0.5.15
	github.com/urfave/cli/v3 v3.14.0
	golang.org/x/arch v0.32.0
	google.golang.org/protobuf v1.36.12
)

require golang.org/x/arch v0.32.0
