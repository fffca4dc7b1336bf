package resp

var keyCommands = []*command{}
