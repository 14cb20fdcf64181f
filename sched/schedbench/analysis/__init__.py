"""After a replay: result files, metrics, comparison views and the HTML report."""
