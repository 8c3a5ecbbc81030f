"""Browser seats for `disputelab host`: see README.md."""
