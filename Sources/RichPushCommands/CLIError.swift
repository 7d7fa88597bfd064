import ArgumentParser

/// A failure reported to the operator as one line on stderr with exit code 1.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
