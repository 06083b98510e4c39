// Package redact hides the credentials of the URLs the crawler is given
// (MongoDB and Redis URIs, proxy sources, judge and check URLs) before any
// of them reaches a log, an error, the status page or a command's output:
// the userinfo, and the values of query options that carry secrets
// (authMechanismProperties, tlsCertificateKeyFilePassword, token=, ...).
// URL is the one function every such output goes through; Text cleans a
// message that may quote a URL or one of its secrets.
package redact
