"""The helpcenter study: Evaluate your own search: the Pitangueira help center."""
