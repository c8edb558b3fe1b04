// Package policy guards Agent Zero's right to write. It owns everything
// that decides what a run may do, and the one chain that decides whether a
// proposed change is applied:
//
//   - the repository's policy, .agent-zero.yml ([ParseRepo]), which the
//     caller reads from the default branch at a pinned commit;
//   - the operator's configuration ([ParseOperator]): the mode ceiling, the
//     isolation the deployment can provide, what each webhook event kind
//     asks for, which repositories are enabled, how long each check may
//     run, and which host directories the container shows read-only;
//   - the effective mode ([Effective]): the minimum of the operator's
//     ceiling, the repository's mode and the mode the event or the --mode
//     flag asks for, so that nothing can raise a mode another one caps;
//   - the authorization chain for writes ([Decide]), the one function every
//     caller runs, for a run and for an approval alike: it asks for each
//     fact ([Need]) in the chain's order, so nothing a later step does
//     (applying the change, running the checks) happens for a change an
//     earlier step refused; a person's approval is one more fact
//     ([Facts].Approved), which lifts the high-impact hold and nothing
//     else; it returns one distinct [Outcome] for every way a change can be
//     refused, and [Applied] only when every step holds.
//
// Observe is the default everywhere. An empty or absent .agent-zero.yml is
// observe mode, and so is one that does not parse: on any parse error the
// caller must use observe mode, which [ParseRepoOrObserve] makes the one
// obvious call. Both files are decoded strictly: unknown fields, wrong
// types, YAML anchors, aliases and merge keys, more than one document and
// files over [MaxSize] are errors. Neither file may name an endpoint or a
// credential ([ErrEndpointOrCredential]): those come only from the
// operator's environment. Checks are argv arrays that run without a shell,
// so an argument holding a shell operator is refused ([ErrShellOperator]).
//
// The package is pure: it reads no file, environment or clock, and runs
// nothing. The risk class the chain decides on comes from Zero's own
// classifier over what git applied, never from the model, and is passed in
// as plain values, like every other fact. The isolation levels ([Local],
// [Container]) are defined here once; the runner reports in them.
package policy
