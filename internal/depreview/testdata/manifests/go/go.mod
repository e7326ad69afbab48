module example.com/app

go 1.22

require (
	github.com/gorilla/mux v1.8.1
	golang.org/x/text v0.14.0
)

require github.com/pkg/errors v0.9.1 // indirect
