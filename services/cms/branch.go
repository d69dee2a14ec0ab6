package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/cmsplatform/cms/pkg/branchfiles"
)

const branchExportLong = `Write a branch's schema and content as files into DIR.

One JSON file per custom type (DIR/types/<guid>.json), attribute
(DIR/attributes/<guid>.json) and object (DIR/objects/<type>/<guid>.json),
with the values the branch shows (inherited ones included) and every
reference written as the referred object's ApiIdentifier or GUID; the
stored files of binary proxy objects go into DIR/files/<md5>.<extension>.
No ids, transactions or times: the same branch exports to the same bytes.
Files of objects no longer on the branch are removed from DIR. The system
model, branches, users and webhook definitions are not exported.

It reads a running installation over the Management API (--url, --user,
--password, as "cms load"): "cms run" or "cms serve". See docs/branches.md,
"Environments in files".`

const branchImportLong = `Apply the files of "cms branch export" in DIR to a branch.

Stored files the installation lacks are uploaded. Each object is matched by
its GUID, else its ApiIdentifier; one that matches nothing is created with
the GUID of its file, a deleted one is restored, and the values the branch
shows are made those of the file (a value the file lacks is removed).
Objects of the branch no file names are left alone. An object already as
its file says is not written: importing the same files twice writes no
transaction the second time.

It writes through the Management API (--url, --user, --password, as "cms
load"), so the import is validated, authorized, indexed and delivered to
webhooks like any write. See docs/branches.md, "Environments in files".`

func newBranchCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "branch", Short: "Move a branch's schema and content to and from files"}
	export := &cobra.Command{
		Use:   "export --branch B DIR",
		Short: "Write a branch's schema and content as files, one per object",
		Long:  branchExportLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, branch := branchClient(cmd)
			start := time.Now()
			res, err := branchfiles.Export(cmd.Context(), c, branch, args[0])
			if err != nil {
				return fmt.Errorf("branch export: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "exported branch %s into %s in %s: %d types, %d attributes, %d objects, %d stored files (%d downloaded)\n",
				branch, args[0], time.Since(start).Round(time.Millisecond), res.Types, res.Attributes, res.Objects, res.Files, res.Downloaded)
			return nil
		},
	}
	imp := &cobra.Command{
		Use:   "import DIR --branch B",
		Short: "Apply exported files to a branch, idempotently",
		Long:  branchImportLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, branch := branchClient(cmd)
			comment, _ := cmd.Flags().GetString("comment")
			start := time.Now()
			res, err := branchfiles.Import(cmd.Context(), c, branch, args[0], comment)
			if err != nil {
				return fmt.Errorf("branch import: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "imported %s into branch %s in %s: %d created, %d updated, %d unchanged, %d files uploaded, %d transactions\n",
				args[0], branch, time.Since(start).Round(time.Millisecond), res.Created, res.Updated, res.Unchanged, res.Uploaded, res.Transactions)
			return nil
		},
	}
	imp.Flags().String("comment", branchfiles.DefaultComment, "the comment of the import's transactions")
	for _, c := range []*cobra.Command{export, imp} {
		f := c.Flags()
		f.String("url", "http://localhost:8080", "HTTP root of the installation")
		f.String("user", "admin", "HTTP Basic user")
		f.String("password", "admin", "HTTP Basic password")
		f.String("branch", "4", "branch id or ApiIdentifier")
		cmd.AddCommand(c)
	}
	return cmd
}

// branchClient is the Management API client and the branch the flags name.
func branchClient(cmd *cobra.Command) (*branchfiles.Client, string) {
	f := cmd.Flags()
	url, _ := f.GetString("url")
	user, _ := f.GetString("user")
	pw, _ := f.GetString("password")
	branch, _ := f.GetString("branch")
	return &branchfiles.Client{URL: url, User: user, Password: pw}, branch
}
