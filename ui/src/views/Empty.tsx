// Approvals and Jobs: empty states saying what will appear here.

export function ApprovalsView() {
  return (
    <section className="empty" aria-label="Approvals">
      <h2>No approvals waiting</h2>
      <p>
        When an assistant asks to change or delete a file, or to run a command, the request
        appears here with the exact details — who asks, what exactly, in which project — and
        you choose Approve once or Deny. Waiting requests also show in the tray menu.
      </p>
    </section>
  );
}

export function JobsView() {
  return (
    <section className="empty" aria-label="Jobs">
      <h2>No jobs</h2>
      <p>
        Commands an assistant runs in a project (builds, tests) will be listed here while they
        run and afterwards, with their live output, duration and resource use, and a Cancel
        button. Execution is off for every project until you turn it on.
      </p>
    </section>
  );
}
