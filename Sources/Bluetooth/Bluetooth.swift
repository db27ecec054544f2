// Bluetooth core
