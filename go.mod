module github.com/gobreakpad/gobreakpad

go 1.26.0

require (
	github.com/alecthomas/participle/v2 v2.1.4 // indirect
	github.com/go-delve/delve v1.27.2 // indirect
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724 // indirect
	github.com/ulikunitz/xz v0.5.15 // indirect
	github.com/urfave/cli/v3 v3.14.0 // indirect
	golang.org/x/arch v0.32.0 // indirect
)
