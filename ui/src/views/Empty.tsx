// Jobs: an empty state saying what will appear here.

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
