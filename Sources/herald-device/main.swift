print("herald-device")
