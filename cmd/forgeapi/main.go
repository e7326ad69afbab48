// Command forgeapi runs the forgeapi server and its admin commands.
package main

func main() {}
