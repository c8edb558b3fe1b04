package cli

func auditCommand() *Command {
	return &Command{
		Name:        "audit",
		Short:       "check that no audit record was changed, removed or inserted",
		Subcommands: []*Command{auditVerifyCommand()},
	}
}
