package resp

var zsetCommands = []*command{}
