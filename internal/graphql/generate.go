package graphql

//go:generate go run ./schemagen
