import ArgumentParser

/// A failure reported to the operator as one line on stderr with exit code 1.
package struct CLIError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
