extension RedisConfiguration {
    /// The commands every new connection sends first: AUTH, SELECT, CLIENT SETNAME, as configured.
    var handshakeCommands: [RedisCommand] {
        var commands: [RedisCommand] = []
        if let password {
            commands.append(username.map { RedisCommand("AUTH", $0, password) } ?? RedisCommand("AUTH", password))
        }
        if database != 0 { commands.append(RedisCommand("SELECT", database)) }
        if let clientName { commands.append(RedisCommand("CLIENT", "SETNAME", clientName)) }
        return commands
    }

    /// Throws the first refusal among the handshake's replies, as an authentication error where it is one.
    func checkHandshake(_ commands: [RedisCommand], replies: [RedisValue]) throws(RedisError) {
        let endpoint = "\(host):\(port)"
        for (command, reply) in zip(commands, replies) {
            guard let message = reply.errorMessage else { continue }
            if command.name == "AUTH" || message.hasPrefix("NOAUTH") || message.hasPrefix("WRONGPASS") {
                throw RedisError(code: .authenticationFailed, message: "authentication to \(endpoint) failed: \(message)")
            }
            throw RedisError(code: .server, message: "\(command.name) failed on \(endpoint): \(message)")
        }
    }
}
