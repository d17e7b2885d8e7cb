package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// command is one subcommand of hccl-test (the sweep is the program
// itself). Its entry lives in its own file, beside its run function and
// its help; the table commands (main.go) lists the entries, and run,
// hccl-test --help's list of commands and `hccl-test help [CMD]` are all
// made from it.
type command struct {
	name    string // what follows hccl-test on the command line
	args    string // what it takes after its name, as its usage line says: "[flags] OLD NEW"
	summary string // what it does, in one line, for hccl-test --help
	// run runs the command on args (those after its name), writing to the
	// outputs of set, and returns the exit code; given -h or --help it
	// prints its help (writeCommandHelp) and returns exitOK.
	run func(args []string, set *outputSet) int
}

// withStdio adapts a run function that writes to stdout and stderr.
func withStdio(f func(args []string, stdout, stderr io.Writer) int) func([]string, *outputSet) int {
	return func(args []string, set *outputSet) int { return f(args, set.stdout, set.stderr) }
}

// lookupCommand returns the entry of the command name, nil if none.
func lookupCommand(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// usageOf is the usage line of the command name ("" for the sweep).
func usageOf(name string) string {
	if c := lookupCommand(name); c != nil {
		return strings.TrimSpace(programName + " " + c.name + " " + c.args)
	}
	return programName + " [flags]"
}

// helpCommand is `hccl-test help [CMD]`.
var helpCommand = command{
	name: "help", args: "[COMMAND]", summary: "this help, or a command's (as COMMAND --help)",
	run: runHelp,
}

// runHelp is `hccl-test help [CMD]`: the sweep's --help, or CMD's.
func runHelp(args []string, set *outputSet) int {
	switch {
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help"):
		writeCommandHelp(set.stdout, "help", "Shows the help of hccl-test (its sweep), or of COMMAND, as COMMAND --help does.", nil, "")
		return exitOK
	case len(args) == 0:
		return runWith([]string{"--help"}, set)
	case len(args) > 1:
		return usageError(set.stderr, "help", fmt.Errorf("unexpected argument %q: want at most one command", args[1]))
	}
	c := lookupCommand(args[0])
	if c == nil {
		return usageError(set.stderr, "help", errors.New(unknownCommand(args[0])))
	}
	return c.run([]string{"--help"}, set)
}

// unknownCommand says that name is no command, and which are.
func unknownCommand(name string) string {
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	return fmt.Sprintf("no command %q: the commands are %s", name, strings.Join(names, ", "))
}

// writeCommandList writes hccl-test --help's list of commands within
// width: each one's usage line and summary.
func writeCommandList(w io.Writer, width int) {
	rows := make([]helpRow, len(commands))
	for i, c := range commands {
		rows[i] = helpRow{left: strings.TrimRight("  "+c.name+" "+c.args, " "), text: c.summary}
	}
	rows[0].title = "Subcommands (" + programName + " COMMAND ..., each with its own --help)"
	writeRows(w, width, maxFlagColumn, rows)
}
