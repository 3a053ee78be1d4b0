"""Job runners: ``run(job) -> dict`` per kind. Each parses its parameters, calls plain library
code, reports progress through the job, and leaves files under the job's artifact folder."""
