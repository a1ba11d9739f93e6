# Certificates for the TLS tests (tests/bats/helpers.bash) and benchmarks
# (scripts/bench-remote.sh), made by the openssl CLI where they run:
# nothing secret is committed.  Sourced by bash, safe under set -eu.

# pki_ca FILE CN: a self-signed CA, FILE.crt and FILE.key.
pki_ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$1.key" -out "$1.crt" -subj "/CN=$2" -days 2 \
	    -addext basicConstraints=critical,CA:TRUE 2>/dev/null
}

# pki_cert FILE CA CN [EXTENSIONS [SUBJECT]]: a certificate the CA
# (a name in the PKI's directory) signed.
pki_cert() {
	local d
	d=$(dirname "$1")
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$1.key" -out "$1.csr" -subj "${5:-/CN=$3}" \
	    2>/dev/null
	openssl x509 -req -in "$1.csr" -CA "$d/$2.crt" -CAkey "$d/$2.key" \
	    -CAcreateserial -out "$1.crt" -days 2 \
	    ${4:+-extfile <(printf '%s\n' "$4")} 2>/dev/null
}
