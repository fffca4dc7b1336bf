package resp

var listCommands = []*command{}
