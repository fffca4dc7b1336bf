package resp

var setCommands = []*command{}
