"""Client libraries as subjects (docs/CLIENTS.md): harness manifests, their installation,
the workload spec a harness gets, running one, and checking what it reports."""
