package cli

func auditCommand() *Command {
	return &Command{
		Name:        "audit",
		UsageLine:   "audit verify [--file FILE]",
		Short:       "check that the audit log is whole: no record changed, removed, reordered or inserted",
		Subcommands: []*Command{auditVerifyCommand()},
	}
}
