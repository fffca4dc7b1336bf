package resp

var hashCommands = []*command{}
