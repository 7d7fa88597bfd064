package import RichPushCore

extension AppID {
    /// `text` as an app id, or ``AppError/invalid(field:_:)`` naming the problem.
    package init(_ text: String) throws(AppError) {
        if let problem = Self.problem(text) { throw AppError.invalid(field: "id", problem) }
        self.init(unchecked: text)
    }
}
