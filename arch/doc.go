// Package arch holds the tests of the module's architecture: rules about
// which packages may link which, checked on the build graph so that they
// hold for the whole tree and not file by file. It has no code of its own.
package arch
