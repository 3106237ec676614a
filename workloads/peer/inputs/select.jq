[.orders[] | select(.amount > 50) | {customer, amount, tags: (.tags | map(ascii_upcase))}]
| group_by(.customer) | map({customer: .[0].customer, total: (map(.amount) | add), n: length})
| sort_by(-.total) | .[:10]
