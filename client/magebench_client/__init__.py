"""Command-line client for the MageBench Leaderboard REST API.

    pip install "https://magebench.example/client/magebench_client-<version>-py3-none-any.whl#sha256=<digest>"
    # the line https://magebench.example/client/ shows, with the digest pip checks; or: pip install ./client
    magebench --url https://magebench.example submit-endpoint --model "My model" \\
        --env sokoban --flow global --subset mini --endpoint https://llm.example/v1 --api-key-env MY_KEY --follow

``python -m magebench_client`` runs the same command. The token comes from --token or, better (argv
is visible to other users of the machine), from the MAGEBENCH_TOKEN environment variable. This
package imports only the standard library and requests, so that submitters install it anywhere
without the site (client/pyproject.toml declares requests as its one dependency).

Exit codes: 0 success (for follow: completed), 1 the submission ended incomplete or cancelled,
2 the site refused the request (or the command line was wrong), 3 the site could not be reached,
141 the output's reader went away (e.g. ``results | head``), as for any command a closed pipe stops.

Modules: ``api`` (the site's REST API and its errors), ``commands`` (what each command does),
``output`` (times, progress and summaries as a person reads them), ``cli`` (the command line) and
``csv_safe`` (CSV files a spreadsheet opens without running them, which the site's exports use too).
"""
