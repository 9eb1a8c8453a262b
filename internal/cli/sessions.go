package cli

import (
	"github.com/spf13/cobra"
)

func newSessionsCommand(g *globalOptions, stdio Stdio) *cobra.Command {
	return &cobra.Command{
		Use:    "sessions",
		Short:  "List this project's sessions",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageError("sessions: not implemented yet")
		},
	}
}
